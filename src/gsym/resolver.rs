//! A GSYM file as a [`SymbolSource`].

use std::path::{Path, PathBuf};

use crate::base::mapped::FileMap;

use super::parser::{GsymView, Layout};
use super::types::{GsymError, LookupResult};
use crate::symbols::{
    CodeInfo, CodeWant, DataInfo, DataWant, Frame, Frames, Miss, SymbolHit, SymbolSource, Text,
};

enum Backing {
    Map(FileMap),
    Owned(Vec<u8>),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Map(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

/// An open GSYM file: the memory map plus its checked layout.
pub struct GsymFile {
    path: PathBuf,
    data: Backing,
    layout: Layout,
}

/// Why a GSYM file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Format(#[from] GsymError),
}

impl GsymFile {
    /// Memory-maps `path` and checks its header and table bounds.
    pub fn open(path: &Path) -> Result<GsymFile, OpenError> {
        let file = std::fs::File::open(path)?;
        let map = FileMap::open(&file, path)?;
        let layout = Layout::parse(&map)?;
        Ok(GsymFile {
            path: path.to_path_buf(),
            data: Backing::Map(map),
            layout,
        })
    }

    /// Parses GSYM bytes held in memory.
    pub fn from_bytes(path: PathBuf, bytes: Vec<u8>) -> Result<GsymFile, GsymError> {
        let layout = Layout::parse(&bytes)?;
        Ok(GsymFile {
            path,
            data: Backing::Owned(bytes),
            layout,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn view(&self) -> GsymView<'_> {
        GsymView::new(self.data.bytes(), &self.layout)
    }

    pub fn uuid(&self) -> &[u8] {
        self.view().uuid()
    }

    pub fn lookup(&self, addr: u64) -> Result<LookupResult, GsymError> {
        self.view().lookup(addr)
    }

    fn unreadable(&self, e: &GsymError) -> Miss {
        Miss::Unreadable {
            path: self.path.display().to_string(),
            reason: e.to_string(),
        }
    }
}

fn to_code_info(r: LookupResult, with_frames: bool) -> CodeInfo {
    let symbol = Some(SymbolHit {
        name: r.func_name.into(),
        address: r.func_start,
        size: r.func_size,
        file: None,
    });
    let has_lines = r.locations.first().is_some_and(|l| l.path().is_some());
    let frames = if with_frames && has_lines {
        r.locations
            .into_iter()
            .map(|l| Frame {
                file: l.path().map(Text::from),
                function: Some(l.name.into()),
                line: l.line,
                column: 0,
            })
            .collect()
    } else {
        Frames::new()
    };
    CodeInfo {
        frames,
        symbol,
        claimed: false,
        shown: Default::default(),
    }
}

impl SymbolSource for GsymFile {
    fn origin(&self) -> String {
        self.path.display().to_string()
    }

    fn truncated(&self) -> Option<String> {
        match &self.data {
            Backing::Map(m) if m.faulted() => Some(self.path.display().to_string()),
            _ => None,
        }
    }

    fn lookup_code(&self, addr: u64, _: CodeWant) -> Result<CodeInfo, Miss> {
        match self.view().lookup(addr) {
            Ok(r) => Ok(to_code_info(r, true)),
            Err(GsymError::NotFound(_)) => Err(Miss::NoInfo),
            // A damaged line table or inline tree: still name the function.
            Err(e) => match self.view().lookup_symbol(addr) {
                Ok(r) => Ok(to_code_info(r, false)),
                Err(GsymError::NotFound(_)) => Err(Miss::NoInfo),
                Err(_) => Err(self.unreadable(&e)),
            },
        }
    }

    fn lookup_data(&self, addr: u64, _: DataWant) -> Result<DataInfo, Miss> {
        // GSYM describes functions only; a function covering the address is
        // the best a data lookup can get.
        match self.view().lookup_symbol(addr) {
            Ok(r) => Ok(DataInfo {
                symbol: to_code_info(r, false).symbol,
                decl_file: None,
                decl_line: 0,
            }),
            Err(GsymError::NotFound(_)) => Err(Miss::NoInfo),
            Err(e) => Err(self.unreadable(&e)),
        }
    }
}
