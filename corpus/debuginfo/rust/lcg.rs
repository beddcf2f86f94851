fn mix(a: u32, b: u32) -> u32 {
    let mut h = a ^ 0x9e37_79b9;
    h = h.wrapping_mul(31).wrapping_add(b);
    let s = h.rotate_left(5);
    s ^ (s >> 7)
}

fn main() {
    let mut acc: u64 = 1;
    let mut i: u32 = 0;
    let limit: u32 = std::env::args().count() as u32 + 9;
    while i < limit {
        let m = mix(i, acc as u32);
        let small = (m & 0xff) as u8;
        acc = acc.wrapping_mul(6364136223846793005).wrapping_add(small as u64);
        i += 1;
    }
    let total = acc % 1000;
    let flag = total > 500;
    println!("{total} {flag}");
}
