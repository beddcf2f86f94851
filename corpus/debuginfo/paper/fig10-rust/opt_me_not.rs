#[inline(never)]
pub fn opt_me_not() {
    unsafe { core::arch::asm!("") }
}
