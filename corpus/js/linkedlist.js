// A linked list built from objects.
function cons(head, tail) {
  return { head, tail };
}

function length(list) {
  let n = 0;
  let node = list;
  while (node !== null) {
    n++;
    node = node.tail;
  }
  return n;
}

function reverse(list) {
  let out = null;
  for (let node = list; node !== null; node = node.tail) {
    out = cons(node.head, out);
  }
  return out;
}

const list = cons(1, cons(2, cons(3, null)));
const rev = reverse(list);
const n = length(rev);
console.log(n, rev.head);
