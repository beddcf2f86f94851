// Bitwise arithmetic on 32-bit integers.
function popcount(v) {
  let n = 0;
  while (v !== 0) {
    v &= v - 1;
    n++;
  }
  return n;
}

function rotl(x, k) {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

const flags = 0b11010111;
const bits = popcount(flags);
const rotated = rotl(0x80000001, 4);
const masked = flags & 0x0f;
const signed = ~masked;
console.log(bits, rotated, masked, signed);
