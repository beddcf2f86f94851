// Several statements per line, and statements spanning lines.
function tally(xs) { let pos = 0; let neg = 0; for (const x of xs) { if (x > 0) pos++; else neg++; } return [pos, neg]; }

function spread(a,
                b,
                c) {
  const total =
    a +
    b +
    c;
  return total;
}

const [p, n] = tally([1, -2, 3, -4, 5]); const s = spread(1, 2, 3);
console.log(p, n, s);
