//! Floating-point template arguments (`Lf3fc00000E`), printed as C's `%a`
//! prints them (`0x1.8p+0`), with `f` after a `float`: LLVM prints them so.

/// `data` is the value's bytes in hex, most significant first: 8 digits for
/// a `float` (kind 0), 16 for a `double` (kind 1). Other kinds (x87 `long
/// double`) are not printed.
pub(super) fn format(kind: u8, data: &str) -> Option<String> {
    let bits = u64::from_str_radix(data, 16).ok()?;
    let value = match kind {
        0 => f32::from_bits(u32::try_from(bits).ok()?) as f64,
        1 => f64::from_bits(bits),
        _ => return None,
    };
    let mut s = hex_float(value);
    if kind == 0 {
        s.push('f');
    }
    Some(s)
}

fn hex_float(v: f64) -> String {
    let bits = v.to_bits();
    let sign = if bits >> 63 != 0 { "-" } else { "" };
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0x7ff {
        return format!("{sign}{}", if mant == 0 { "inf" } else { "nan" });
    }
    if exp == 0 && mant == 0 {
        return format!("{sign}0x0p+0");
    }
    let (lead, e) = if exp == 0 {
        (0, -1022)
    } else {
        (1, exp - 1023)
    };
    let mut digits = format!("{mant:013x}");
    while digits.ends_with('0') {
        digits.pop();
    }
    let dot = if digits.is_empty() { "" } else { "." };
    let esign = if e < 0 { "-" } else { "+" };
    format!("{sign}0x{lead}{dot}{digits}p{esign}{}", e.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_c_percent_a() {
        assert_eq!(format(1, "3ff8000000000000").unwrap(), "0x1.8p+0");
        assert_eq!(format(0, "3f800000").unwrap(), "0x1p+0f");
        assert_eq!(format(1, "0000000000000000").unwrap(), "0x0p+0");
        assert_eq!(format(1, "bfe0000000000000").unwrap(), "-0x1p-1");
        assert_eq!(format(2, "00000000000000000000"), None);
    }
}
