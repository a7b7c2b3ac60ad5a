//! Opening ELF files: memory-map, check the magic, read the notes that say
//! what a file is (build ID, debug links, whether it carries DWARF).

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use crate::base::mapped::FileMap;
use object::{Architecture, Object, ObjectSection, SectionKind};

use crate::symbols::Miss;

/// Smallest possible ELF header (ELF32).
const MIN_ELF_SIZE: u64 = 52;

/// A memory-mapped file and the path it was opened from.
pub(crate) struct Mapped {
    pub path: PathBuf,
    pub map: Arc<FileMap>,
}

/// Files mapped in this process, by identity: a file opened again (under
/// two paths, or by two symbolizers) shares
/// one mapping, so its pages are resident, and counted, once.
static MAPPED: Mutex<Option<HashMap<FileId, Weak<FileMap>>>> = Mutex::new(None);

/// Device, inode, size and modification time: a file replaced or
/// rewritten in place is mapped afresh.
type FileId = (u64, u64, u64, i64, i64);

fn shared_map(file: &File, path: &Path, meta: &std::fs::Metadata) -> std::io::Result<Arc<FileMap>> {
    use std::os::unix::fs::MetadataExt;
    let id = (
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
    );
    let mut maps = crate::base::lock(&MAPPED);
    let maps = maps.get_or_insert_with(HashMap::new);
    if let Some(map) = maps.get(&id).and_then(Weak::upgrade) {
        return Ok(map);
    }
    let map = Arc::new(FileMap::open(file, path)?);
    crate::base::insert_weak(maps, id, &map);
    Ok(map)
}

/// Why [`open_regular`] refused a path.
#[derive(Debug)]
pub(crate) enum OpenError {
    Missing,
    NotRegular,
    /// /proc, /sys and the like: their "regular" files are made up by the
    /// kernel as they are read.
    KernelFileSystem,
    TooShort,
    NotElf,
    Io(std::io::Error),
}

impl OpenError {
    fn into_miss(self, path: &Path) -> Miss {
        match self {
            OpenError::Missing => Miss::NotFound,
            OpenError::NotRegular => unreadable(path, "not a regular file"),
            OpenError::KernelFileSystem => unreadable(path, "on a kernel file system"),
            OpenError::TooShort => unreadable(path, "not an ELF file (too short)"),
            OpenError::NotElf => unreadable(path, "not an ELF file"),
            OpenError::Io(e) => unreadable(path, e),
        }
    }
}

/// Open `path` for reading only if it is a regular ELF file, without ever
/// blocking or touching anything else: the path is looked at before it is
/// opened (a device is never opened), opened non-blocking (a FIFO swapped
/// in meanwhile does not wait for a writer) without becoming a controlling
/// terminal, and checked again on the open file. Reads four bytes.
pub(crate) fn open_regular(path: &Path) -> Result<(File, std::fs::Metadata), OpenError> {
    use std::os::unix::fs::OpenOptionsExt;
    let kind = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => OpenError::Missing,
        _ => OpenError::Io(e),
    };
    if !std::fs::metadata(path).map_err(kind)?.is_file() {
        return Err(OpenError::NotRegular);
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(kind)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    if !meta.is_file() {
        return Err(OpenError::NotRegular);
    }
    if on_kernel_file_system(&file) {
        return Err(OpenError::KernelFileSystem);
    }
    if meta.len() < MIN_ELF_SIZE {
        return Err(OpenError::TooShort);
    }
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic).map_err(OpenError::Io)?;
    if &magic != b"\x7fELF" {
        return Err(OpenError::NotElf);
    }
    Ok((file, meta))
}

/// Whether `file` lives on a file system the kernel synthesizes.
fn on_kernel_file_system(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // Magic numbers of linux/magic.h: proc, sysfs, debugfs, tracefs,
    // securityfs, configfs, cgroup, cgroup2, bpf.
    const KERNEL: [i64; 9] = [
        0x9fa0,
        0x6265_6572,
        0x6462_6720,
        0x7472_6163,
        0x7363_6673,
        0x6265_6570,
        0x27e0eb,
        0x6367_7270,
        0xcafe_4a11,
    ];
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: fstatfs writes a statfs into the buffer it is given, and we
    // read it only when it says it did.
    let ok = unsafe { libc::fstatfs(file.as_raw_fd(), st.as_mut_ptr()) } == 0;
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    let fs = if ok {
        // SAFETY: initialised by the successful call above.
        i64::from(unsafe { st.assume_init() }.f_type as i64)
    } else {
        return false;
    };
    KERNEL.contains(&fs)
}

impl Mapped {
    /// Open and map `path`; a regular file starting with the ELF magic only
    /// (see [`open_regular`]).
    pub(crate) fn open(path: &Path) -> Result<Mapped, Miss> {
        Mapped::open_as(path).map_err(|e| e.into_miss(path))
    }

    /// [`Self::open`], saying why not in [`OpenError`]'s terms.
    pub(crate) fn open_as(path: &Path) -> Result<Mapped, OpenError> {
        let (file, meta) = open_regular(path)?;
        let map = shared_map(&file, path, &meta).map_err(OpenError::Io)?;
        Ok(Mapped {
            path: path.to_path_buf(),
            map,
        })
    }

    pub(crate) fn display(&self) -> String {
        self.path.display().to_string()
    }
}

pub(crate) fn unreadable(path: &Path, reason: impl std::fmt::Display) -> Miss {
    Miss::Unreadable {
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

/// What an ELF file is, read from its headers and notes only.
#[derive(Clone, Debug, Default)]
pub(crate) struct Probe {
    pub build_id: Option<Vec<u8>>,
    /// `.gnu_debuglink`: file name and CRC-32 of the debug file.
    pub debuglink: Option<(Vec<u8>, u32)>,
    /// `.gnu_debugaltlink`: path and build ID of the dwz supplementary file.
    pub altlink: Option<(Vec<u8>, Vec<u8>)>,
    /// Has a `.debug_info` section with contents.
    pub has_dwarf: bool,
}

impl Probe {
    pub(crate) fn read(data: &[u8]) -> Result<Probe, String> {
        let file = parse(data)?;
        Ok(Probe::of(&file))
    }

    pub(crate) fn of(file: &object::File<'_>) -> Probe {
        let has_dwarf = [".debug_info", ".zdebug_info"].iter().any(|name| {
            file.section_by_name(name)
                .is_some_and(|s| s.kind() != SectionKind::UninitializedData && s.size() > 0)
        });
        Probe {
            build_id: file.build_id().ok().flatten().map(<[u8]>::to_vec),
            debuglink: file
                .gnu_debuglink()
                .ok()
                .flatten()
                .map(|(name, crc)| (name.to_vec(), crc)),
            altlink: file
                .gnu_debugaltlink()
                .ok()
                .flatten()
                .map(|(path, id)| (path.to_vec(), id.to_vec())),
            has_dwarf,
        }
    }
}

/// Parse an ELF file (and only ELF) with `object`.
pub(crate) fn parse(data: &[u8]) -> Result<object::File<'_>, String> {
    match object::FileKind::parse(data) {
        Ok(object::FileKind::Elf32 | object::FileKind::Elf64) => {}
        Ok(_) => return Err("not an ELF file".into()),
        Err(e) => return Err(e.to_string()),
    }
    object::File::parse(data).map_err(|e| format!("bad ELF file: {e}"))
}

/// The amount to subtract from a return address to land inside the call
/// instruction (the smallest instruction size of the architecture).
pub(crate) fn return_address_step(arch: Option<Architecture>) -> u64 {
    use Architecture::*;
    match arch {
        Some(Aarch64 | Aarch64_Ilp32 | PowerPc | PowerPc64 | Mips | Mips64 | Mips64_N32) => 4,
        Some(Sparc | Sparc32Plus | Sparc64 | LoongArch32 | LoongArch64) => 4,
        Some(Riscv32 | Riscv64 | Arm | S390x | Csky) => 2,
        _ => 1,
    }
}

/// CRC-32 (the zlib one, as `.gnu_debuglink` uses) of a whole file.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// The ELF build ID of a file on disk, reading only the headers and notes.
/// Used to index `--symbol-path` folders.
pub(crate) fn read_build_id(path: &Path) -> Result<Option<Vec<u8>>, Miss> {
    let mapped = Mapped::open(path)?;
    let file = parse(&mapped.map).map_err(|e| unreadable(path, e))?;
    Ok(file.build_id().ok().flatten().map(<[u8]>::to_vec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_truncated_files_are_misses() {
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage");
        std::fs::write(&garbage, vec![0xa5u8; 4096]).unwrap();
        assert!(matches!(
            Mapped::open(&garbage),
            Err(Miss::Unreadable { .. })
        ));
        let mut truncated = b"\x7fELF\x02\x01\x01".to_vec();
        truncated.resize(60, 0);
        let t = dir.path().join("truncated");
        std::fs::write(&t, &truncated).unwrap();
        let m = Mapped::open(&t).unwrap();
        assert!(Probe::read(&m.map).is_err());
        assert!(matches!(
            Mapped::open(dir.path()),
            Err(Miss::Unreadable { .. })
        ));
        assert!(matches!(
            Mapped::open(&dir.path().join("nope")),
            Err(Miss::NotFound)
        ));
    }

    #[test]
    fn steps() {
        assert_eq!(return_address_step(Some(Architecture::X86_64)), 1);
        assert_eq!(return_address_step(Some(Architecture::Aarch64)), 4);
        assert_eq!(return_address_step(Some(Architecture::Riscv64)), 2);
    }
}
