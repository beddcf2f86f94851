//! Instruction semantics, differentially: seeded random modules (WAT text
//! compiled with the `wat` crate) of integer and float arithmetic,
//! conversions, sign extension, memory loads/stores of every width, locals,
//! globals, blocks, `br_if`/`br_table`/`if`/`select`, loops, direct and
//! indirect calls; each emits its intermediate results to stdout. node's
//! WASI is the reference; stdout and the end (exit or trap) must agree, and
//! a symbolic run (the module reads 8 input bytes) must agree too.

mod support;

use doppel_concolic::{Module, Symbolic};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{End, node, ours};

#[derive(Clone, Copy, PartialEq)]
enum Ty {
    I32,
    I64,
    F64,
}

struct Gen {
    rng: ChaCha8Rng,
}

const I32_EDGES: &[i64] = &[
    0,
    1,
    -1,
    2,
    7,
    31,
    32,
    33,
    255,
    256,
    65535,
    i32::MIN as i64,
    i32::MAX as i64,
    -2,
    100,
];
const I64_EDGES: &[i64] = &[
    0,
    1,
    -1,
    63,
    64,
    65,
    i64::MIN,
    i64::MAX,
    i32::MIN as i64,
    u32::MAX as i64,
    -7,
    1 << 40,
];
const F64_EDGES: &[&str] = &[
    "0",
    "-0",
    "1.5",
    "-2.5",
    "0.5",
    "3.5",
    "1e300",
    "-1e300",
    "inf",
    "-inf",
    "nan",
    "4294967296.7",
    "-9.2e18",
    "2.5",
];

impl Gen {
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.rng.random_range(0..xs.len())]
    }

    fn konst(&mut self, ty: Ty) -> String {
        match ty {
            Ty::I32 => {
                let v = if self.rng.random_bool(0.5) {
                    self.pick(I32_EDGES)
                } else {
                    self.rng.random::<i32>() as i64
                };
                format!("(i32.const {v})")
            }
            Ty::I64 => {
                let v = if self.rng.random_bool(0.5) {
                    self.pick(I64_EDGES)
                } else {
                    self.rng.random::<i64>()
                };
                format!("(i64.const {v})")
            }
            Ty::F64 => format!("(f64.const {})", self.pick(F64_EDGES)),
        }
    }

    fn leaf(&mut self, ty: Ty) -> String {
        let addr = self.rng.random_range(1024..1056);
        let off = self.rng.random_range(0..8);
        match (ty, self.rng.random_range(0..4)) {
            (_, 0) => self.konst(ty),
            (Ty::I32, 1) => {
                let l = self.pick(&["i32.load", "i32.load8_s", "i32.load8_u", "i32.load16_s", "i32.load16_u"]);
                format!("({l} offset={off} (i32.const {addr}))")
            }
            (Ty::I64, 1) => {
                let l = self.pick(&[
                    "i64.load",
                    "i64.load8_s",
                    "i64.load8_u",
                    "i64.load16_s",
                    "i64.load16_u",
                    "i64.load32_s",
                    "i64.load32_u",
                ]);
                format!("({l} offset={off} (i32.const {addr}))")
            }
            (Ty::F64, 1) => format!("(f64.convert_i32_s (i32.load offset={off} (i32.const {addr})))"),
            (Ty::I32, 2) => format!("(local.get {})", self.pick(&["$a", "$b"])),
            (Ty::I64, 2) => format!("(local.get {})", self.pick(&["$p", "$q"])),
            (Ty::I32, _) => "(global.get $g32)".into(),
            (Ty::I64, _) => "(global.get $g64)".into(),
            (Ty::F64, _) => "(f64.convert_i64_s (local.get $p))".to_string(),
        }
    }

    fn expr(&mut self, ty: Ty, depth: u32) -> String {
        if depth == 0 || self.rng.random_bool(0.15) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::F64 => match self.rng.random_range(0..4) {
                0 => {
                    let op = self.pick(&["add", "sub", "mul", "div", "min", "max", "copysign"]);
                    format!("(f64.{op} {} {})", self.expr(Ty::F64, d), self.expr(Ty::F64, d))
                }
                1 => {
                    let op = self.pick(&["abs", "neg", "ceil", "floor", "trunc", "nearest", "sqrt"]);
                    format!("(f64.{op} {})", self.expr(Ty::F64, d))
                }
                2 => format!("(f64.promote_f32 (f32.demote_f64 {}))", self.expr(Ty::F64, d)),
                _ => {
                    let c = self.pick(&["f64.convert_i64_u", "f64.convert_i64_s"]);
                    format!("({c} {})", self.expr(Ty::I64, d))
                }
            },
            _ => {
                let (t, other) = if ty == Ty::I32 {
                    ("i32", Ty::I64)
                } else {
                    ("i64", Ty::I32)
                };
                match self.rng.random_range(0..12) {
                    0..=3 => {
                        let op = self.pick(&[
                            "add", "sub", "mul", "and", "or", "xor", "shl", "shr_s", "shr_u", "rotl", "rotr", "div_s",
                            "div_u", "rem_s", "rem_u",
                        ]);
                        let b = self.expr(ty, d);
                        let b = if (op.starts_with("div") || op.starts_with("rem")) && self.rng.random_bool(0.9) {
                            format!("({t}.or {b} ({t}.const 1))")
                        } else {
                            b
                        };
                        format!("({t}.{op} {} {b})", self.expr(ty, d))
                    }
                    4 => {
                        let op = self.pick(&[
                            "eq", "ne", "lt_s", "lt_u", "gt_s", "gt_u", "le_s", "le_u", "ge_s", "ge_u",
                        ]);
                        let ct = self.pick(&[Ty::I32, Ty::I64]);
                        let ctn = if ct == Ty::I32 { "i32" } else { "i64" };
                        let cmp = format!("({ctn}.{op} {} {})", self.expr(ct, d), self.expr(ct, d));
                        if ty == Ty::I32 {
                            cmp
                        } else {
                            format!("(i64.extend_i32_u {cmp})")
                        }
                    }
                    5 => {
                        let ops: &[&str] = if ty == Ty::I32 {
                            &["clz", "ctz", "popcnt", "eqz", "extend8_s", "extend16_s"]
                        } else {
                            &["clz", "ctz", "popcnt", "extend8_s", "extend16_s", "extend32_s"]
                        };
                        format!("({t}.{} {})", self.pick(ops), self.expr(ty, d))
                    }
                    6 => {
                        if ty == Ty::I32 {
                            format!("(i32.wrap_i64 {})", self.expr(other, d))
                        } else {
                            let c = self.pick(&["i64.extend_i32_s", "i64.extend_i32_u"]);
                            format!("({c} {})", self.expr(other, d))
                        }
                    }
                    7 => {
                        let sat = self.rng.random_bool(0.95);
                        let s = self.pick(&["s", "u"]);
                        let tr = if sat { "trunc_sat" } else { "trunc" };
                        format!("({t}.{tr}_f64_{s} {})", self.expr(Ty::F64, d))
                    }
                    8 => format!(
                        "(if (result {t}) {} (then {}) (else {}))",
                        self.cond(d),
                        self.expr(ty, d),
                        self.expr(ty, d)
                    ),
                    9 => format!("(select {} {} {})", self.expr(ty, d), self.expr(ty, d), self.cond(d)),
                    10 => {
                        if self.rng.random_bool(0.5) {
                            format!(
                                "(block (result {t}) (br_if 0 {} {}) (drop) {})",
                                self.expr(ty, d),
                                self.cond(d),
                                self.expr(ty, d)
                            )
                        } else {
                            format!(
                                "(block (result {t}) (block (block (br_table 0 1 2 1 {})) {} (br 1)) {})",
                                self.expr(Ty::I32, d),
                                self.expr(ty, d),
                                self.expr(ty, d)
                            )
                            .replace("(br_table 0 1 2 1 ", "(br_table 0 1 1 ")
                        }
                    }
                    _ => {
                        let args = format!("{} {}", self.expr(Ty::I64, d), self.expr(Ty::I64, d));
                        let call = if self.rng.random_bool(0.5) {
                            format!("(call $h{} {args})", self.rng.random_range(0..3))
                        } else {
                            // Index 3 holds a function of another type: a trap when chosen.
                            let k = if self.rng.random_bool(0.97) {
                                self.rng.random_range(0..3)
                            } else {
                                3
                            };
                            format!("(call_indirect (type $bin) {args} (i32.const {k}))")
                        };
                        if ty == Ty::I32 {
                            format!("(i32.wrap_i64 {call})")
                        } else {
                            call
                        }
                    }
                }
            }
        }
    }

    fn cond(&mut self, d: u32) -> String {
        let op = self.pick(&["lt_s", "gt_u", "eq", "ne", "le_s"]);
        format!("(i32.{op} {} {})", self.expr(Ty::I32, d), self.expr(Ty::I32, d))
    }

    fn emit(&mut self, ty: Ty, depth: u32) -> String {
        let e = self.expr(ty, depth);
        match ty {
            Ty::I32 => format!("(call $emit (i64.extend_i32_u {e}))"),
            Ty::I64 => format!("(call $emit {e})"),
            Ty::F64 => format!("(call $emit (i64.trunc_sat_f64_s {e}))"),
        }
    }

    fn statement(&mut self) -> String {
        let depth = self.rng.random_range(1..5);
        match self.rng.random_range(0..10) {
            0 => {
                let st = self.pick(&["i32.store", "i32.store8", "i32.store16"]);
                let (a, o) = (self.rng.random_range(1024..1056), self.rng.random_range(0..8));
                format!("({st} offset={o} (i32.const {a}) {})", self.expr(Ty::I32, depth))
            }
            1 => {
                let st = self.pick(&["i64.store", "i64.store8", "i64.store16", "i64.store32"]);
                let (a, o) = (self.rng.random_range(1024..1056), self.rng.random_range(0..8));
                format!("({st} offset={o} (i32.const {a}) {})", self.expr(Ty::I64, depth))
            }
            2 => format!("(local.set {} {})", self.pick(&["$a", "$b"]), self.expr(Ty::I32, depth)),
            3 => format!("(local.set {} {})", self.pick(&["$p", "$q"]), self.expr(Ty::I64, depth)),
            4 => format!("(global.set $g64 {})", self.expr(Ty::I64, depth)),
            5 => {
                let n = self.rng.random_range(1..6);
                let body = self.expr(Ty::I64, depth.min(3));
                format!(
                    "(local.set $i (i32.const {n})) (loop $l (local.set $q (i64.xor (i64.rotl (local.get $q) (i64.const 5)) {body})) \
                     (local.set $i (i32.sub (local.get $i) (i32.const 1))) (br_if $l (i32.gt_s (local.get $i) (i32.const 0)))) \
                     (call $emit (local.get $q))"
                )
            }
            6 => self.emit(Ty::F64, depth),
            7 => self.emit(Ty::I32, depth),
            _ => self.emit(Ty::I64, depth),
        }
    }

    fn module(&mut self, statements: usize) -> String {
        let mut data = String::new();
        for _ in 0..48 {
            data.push_str(&format!("\\{:02x}", self.rng.random::<u8>()));
        }
        let mut helpers = String::new();
        for i in 0..3 {
            let mut e = self.expr(Ty::I64, 2);
            for (from, to) in [("$p", "0"), ("$q", "1")] {
                e = e.replace(&format!("(local.get {from})"), &format!("(local.get {to})"));
            }
            for (from, to) in [
                ("$a", "(i32.wrap_i64 (local.get 0))"),
                ("$b", "(i32.wrap_i64 (local.get 1))"),
            ] {
                e = e.replace(&format!("(local.get {from})"), to);
            }
            if e.contains("call") {
                e = "(i64.sub (local.get 0) (i64.mul (local.get 1) (i64.const 3)))".into();
            }
            helpers.push_str(&format!("(func $h{i} (type $bin) (param i64 i64) (result i64) {e})\n"));
        }
        let body: Vec<String> = (0..statements).map(|_| self.statement()).collect();
        format!(
            r#"(module
  (type $bin (func (param i64 i64) (result i64)))
  (type $other (func (param i64) (result i64)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $g32 (mut i32) (i32.const -5))
  (global $g64 (mut i64) (i64.const 1234567890123))
  (data (i32.const 1024) "{data}")
  (table 4 funcref)
  (elem (i32.const 0) $h0 $h1 $h2 $odd)
  (func $odd (type $other) (param i64) (result i64) (local.get 0))
  {helpers}
  (func $emit (param i64)
    (i64.store (i32.const 0) (local.get 0))
    (i32.store (i32.const 16) (i32.const 0))
    (i32.store (i32.const 20) (i32.const 8))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24))))
  (func (export "_start") (local $a i32) (local $b i32) (local $i i32) (local $p i64) (local $q i64)
    ;; 8 input bytes over the scratch area: symbolic runs see them as variables.
    (i32.store (i32.const 32) (i32.const 1024))
    (i32.store (i32.const 36) (i32.const 8))
    (drop (call $fd_read (i32.const 0) (i32.const 32) (i32.const 1) (i32.const 40)))
    (local.set $a (i32.load (i32.const 1024)))
    (local.set $p (i64.load (i32.const 1028)))
    {body})
)"#,
            body = body.join("\n    ")
        )
    }
}

#[test]
fn random_modules_agree_with_node() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(0x5eed_0001),
    };
    let (mut traps, mut values) = (0, 0);
    for i in 0..60 {
        let wat = g.module(30);
        let bytes = wat::parse_str(&wat).unwrap_or_else(|e| panic!("module {i}: {e}\n{wat}"));
        let path = dir.path().join(format!("m{i}.wasm"));
        std::fs::write(&path, &bytes).unwrap();
        let module = Module::decode(&bytes).expect("decode");
        let stdin: Vec<u8> = (0..8).map(|_| g.rng.random()).collect();
        let want = node(&path, &stdin, &[], dir.path());
        let (got, _) = ours(&module, &stdin, &[], vec![], Symbolic::NONE);
        assert_eq!(got, want, "module {i} (concrete) differs from node:\n{wat}");
        let (sym, run) = ours(&module, &stdin, &[], vec![], Symbolic::ALL);
        assert_eq!(sym, want, "module {i} (symbolic) differs from node:\n{wat}");
        // Every path constraint holds on the input that produced it.
        for c in &run.path {
            assert_eq!(
                run.arena.eval(c.expr, &|v| stdin[v.index as usize]),
                1,
                "module {i}: {c:?} false on its own input"
            );
        }
        traps += (want.end == End::Trap) as u32;
        values += want.stdout.len() / 8;
    }
    // The generator must exercise both endings and many values.
    assert!(traps > 0 && traps < 40, "{traps} of 60 modules trapped");
    assert!(values > 500, "only {values} values compared");
}
