function f(p = eval("var arguments")) {
  if (false) { p = 4; }
  if (false) { p = 7; }
  if (false) { p = 0; }
  function arguments() {}
}
try { f(); } catch (e) { console.log(String(e)); }
