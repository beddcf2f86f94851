// doppel-engines: the JSON-lines loop the node-hosted workers share
// (protocol: src/wire.rs). serve(version, run): run(req) returns (or
// resolves to) a response object without id; requests are handled one at a time.
'use strict';
const readline = require('node:readline');

function escape(s) {
  return s.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

function send(o) {
  process.stdout.write(escape(JSON.stringify(o)) + '\n');
}

// Collects print output up to `cap` characters; one line per call.
function printer(cap, toText) {
  const st = { out: '', cut: false };
  st.print = (...args) => {
    if (st.cut) return;
    const line = args.map(toText).join(' ') + '\n';
    if (st.out.length + line.length > cap) {
      st.out += line.slice(0, Math.max(0, cap - st.out.length));
      st.cut = true;
    } else {
      st.out += line;
    }
  };
  return st;
}

function serve(version, run) {
  send({ hello: 'doppel-engines/1', version });
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  const queue = [];
  let busy = false;
  const next = async () => {
    if (busy) return;
    busy = true;
    while (queue.length) {
      const req = JSON.parse(queue.shift());
      let res;
      try {
        res = await run(req);
      } catch (e) {
        res = { status: 'host-error', reason: 'worker: ' + String(e && e.stack || e) };
      }
      res.id = req.id;
      send(res);
    }
    busy = false;
  };
  rl.on('line', (line) => {
    if (line === '') return;
    queue.push(line);
    next();
  });
  rl.on('close', () => process.exit(0));
}

// A value as text, never throwing (a throwing toString prints as
// `[unprintable]`).
const text = (v) => { try { return String(v); } catch (e) { return '[unprintable]'; } };

// A thrown value: its constructor's name and message (typeof for primitives).
function describe(e) {
  const t = e === null ? 'null' : typeof e;
  if (t !== 'object' && t !== 'function') return { ctor: t, message: t === 'symbol' ? '' : text(e) };
  let ctor = null, message = null;
  try { const c = e.constructor; if (c != null && typeof c.name === 'string') ctor = c.name; } catch (x) {}
  try { if (e.message !== undefined) message = text(e.message); } catch (x) {}
  return { ctor, message };
}

module.exports = { serve, printer, send, text, describe };
