function check(f) {
  try {
    f();
  } catch (e) {
    return 1;
  }
  return 0;
}
