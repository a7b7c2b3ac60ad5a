//! symfilter fixture: Rust code (legacy or v0 mangling) linked into a C program.
#![no_std]

use core::panic::PanicInfo;

pub mod shapes {
    pub struct Circle {
        pub r: u32,
    }

    impl Circle {
        #[inline(never)]
        pub fn area(&self) -> u32 {
            3 * self.r * self.r
        }
    }

    #[inline(never)]
    pub fn total<T: Into<u32> + Copy>(items: &[T]) -> u32 {
        items.iter().map(|&v| v.into()).sum()
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn rust_entry(n: u32) -> u32 {
    let c = shapes::Circle { r: n };
    c.area() + shapes::total(&[n as u8, 2u8, 3u8])
}

#[panic_handler]
fn panic(_: &PanicInfo) -> ! {
    loop {}
}
