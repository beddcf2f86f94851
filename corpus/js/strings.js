// String building, template literals, methods.
function pad(s, n) {
  let out = s;
  while (out.length < n) {
    out = " " + out;
  }
  return out;
}

function reverse(s) {
  let r = "";
  for (let i = s.length - 1; i >= 0; i--) {
    r += s[i];
  }
  return r;
}

const name = "doppel";
const greeting = `hello ${name}, ${name.length} letters`;
const padded = pad("7", 3);
const rev = reverse(name);
const upper = name.toUpperCase();
const multi = `line one
line two ${rev}`;
console.log(greeting, padded, rev, upper, multi.length);
