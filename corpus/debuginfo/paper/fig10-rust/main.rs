fn main() {
    let mut counter = 0;
    {
        let mut tick = || counter += 1;
        tick();
        tick();
        lib::opt_me_not();
    }
    assert_eq!(counter, 2);
}
