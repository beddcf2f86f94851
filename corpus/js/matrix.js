// Nested arrays as matrices.
function zeros(n, m) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    rows.push(new Array(m).fill(0));
  }
  return rows;
}

function multiply(a, b) {
  const n = a.length;
  const m = b[0].length;
  const out = zeros(n, m);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < b.length; k++) s += a[i][k] * b[k][j];
      out[i][j] = s;
    }
  }
  return out;
}

const a = [[1, 2], [3, 4]];
const b = [[5, 6], [7, 8]];
const c = multiply(a, b);
console.log(c[0][0], c[1][1]);
