// doppel-engines: what the jsc and js102 shell workers share (ES5, no
// engine-specific API). The shell worker file is this file followed by its
// own part; see jsc.js and js102.js. Protocol: src/wire.rs.
var doppel = (function () {
  var escape = function (s) {
    // ASCII-only lines: the shells' readline()/print() are Latin-1 (notes §5.4).
    return s.replace(/[\u007f-\uffff]/g, function (c) {
      return "\\u" + ("000" + c.charCodeAt(0).toString(16)).slice(-4);
    });
  };
  var send = function (o) { print(escape(JSON.stringify(o))); };
  var text = function (v) {
    try { return String(v); } catch (e) { return "[unprintable]"; }
  };
  // A printer collecting output up to a cap; one line per call, arguments joined by spaces.
  var printer = function (cap) {
    var st = { out: "", cut: false };
    st.print = function () {
      var parts = [];
      for (var i = 0; i < arguments.length; i++) parts.push(text(arguments[i]));
      var line = parts.join(" ") + "\n";
      if (st.cut) return;
      if (st.out.length + line.length > cap) {
        st.out += line.slice(0, Math.max(0, cap - st.out.length));
        st.cut = true;
      } else {
        st.out += line;
      }
    };
    return st;
  };
  // The thrown value as {ctor, message}, read without letting it throw.
  var describe = function (e) {
    var t = e === null ? "null" : typeof e;
    if (t !== "object" && t !== "function") {
      return { ctor: t, message: t === "symbol" ? "" : text(e) };
    }
    var ctor = null, message = null;
    try {
      var c = e.constructor;
      if (c !== undefined && c !== null) {
        var n = c.name;
        if (typeof n === "string") ctor = n;
      }
    } catch (x) {}
    try {
      var m = e.message;
      if (m !== undefined) message = text(m);
    } catch (x) {}
    return { ctor: ctor, message: message };
  };
  // Serves requests until stdin ends: run(src, print) evaluates src in a fresh realm.
  var serve = function (version, run) {
    send({ hello: "doppel-engines/1", version: version });
    for (;;) {
      var line = readline();
      if (line === null || line === undefined || line === "") break;
      var req = JSON.parse(line);
      var p = printer(req.output_cap);
      var res;
      try {
        run(req.src, p.print);
        res = { status: "normal" };
      } catch (e) {
        var d = describe(e);
        res = { status: "throw", ctor: d.ctor, message: d.message };
      }
      res.id = req.id;
      res.stdout = p.out;
      res.stdout_cut = p.cut;
      send(res);
    }
  };
  return { serve: serve };
})();
