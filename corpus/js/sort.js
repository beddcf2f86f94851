// Insertion sort and binary search on arrays.
function insertionSort(xs) {
  const a = xs.slice();
  for (let i = 1; i < a.length; i++) {
    const key = a[i];
    let j = i - 1;
    while (j >= 0 && a[j] > key) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = key;
  }
  return a;
}

function binarySearch(a, x) {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] === x) return mid;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

const sorted = insertionSort([5, 2, 9, 1, 5, 6]);
const at = binarySearch(sorted, 6);
console.log(sorted.join(" "), at);
