// A WebSocket client (RFC 6455) over node:net, for doppel's reproducers: Debian 12's Node 18 has
// no WebSocket and Node 20 only behind --experimental-websocket, and a reproducer must run with
// the `node` a maintainer has, without flags or packages. Only what a CDP session needs: ws://
// URLs, text messages (fragmented or not), ping/pong, close; the subset of the browser API the
// reproducers use (addEventListener 'open' | 'message' | 'close' | 'error', send, close).
import net from 'node:net';
import crypto from 'node:crypto';

export class WebSocket {
  constructor(url) {
    const u = new URL(url);
    if (u.protocol !== 'ws:') throw new Error(`only ws:// URLs are supported: ${url}`);
    this.listeners = { open: [], message: [], close: [], error: [] };
    this.buf = Buffer.alloc(0);
    this.fragments = [];
    this.open = false;
    this.closed = false;
    const key = crypto.randomBytes(16).toString('base64');
    this.socket = net.connect(Number(u.port || 80), u.hostname, () => {
      this.socket.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    this.socket.setNoDelay(true);
    this.socket.on('data', (d) => this.receive(d));
    this.socket.on('error', (e) => this.emit('error', { message: String(e) }));
    this.socket.on('close', () => this.shut());
  }

  addEventListener(type, fn) {
    this.listeners[type].push(fn);
  }

  emit(type, event) {
    for (const fn of this.listeners[type]) fn(event);
  }

  shut() {
    if (this.closed) return;
    this.closed = true;
    this.emit('close', {});
  }

  receive(data) {
    this.buf = Buffer.concat([this.buf, data]);
    if (!this.open) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = this.buf.subarray(0, end).toString('latin1');
      this.buf = this.buf.subarray(end + 4);
      if (!/^HTTP\/1\.1 101/.test(head)) {
        this.emit('error', { message: `handshake refused: ${head.split('\r\n')[0]}` });
        this.socket.destroy();
        return;
      }
      this.open = true;
      this.emit('open', {});
    }
    for (;;) {
      const frame = this.frame();
      if (!frame) return;
      const { fin, opcode, payload } = frame;
      if (opcode === 0x8) {
        this.socket.end();
        this.shut();
        return;
      }
      if (opcode === 0x9) this.write(0xa, payload);
      if (opcode === 0x1 || opcode === 0x0) {
        this.fragments.push(payload);
        if (fin) {
          const text = Buffer.concat(this.fragments).toString('utf8');
          this.fragments = [];
          this.emit('message', { data: text });
        }
      }
    }
  }

  // One complete frame taken from the buffer, or null when more bytes are needed.
  frame() {
    const b = this.buf;
    if (b.length < 2) return null;
    let len = b[1] & 0x7f;
    let at = 2;
    if (len === 126) {
      if (b.length < 4) return null;
      len = b.readUInt16BE(2);
      at = 4;
    } else if (len === 127) {
      if (b.length < 10) return null;
      len = Number(b.readBigUInt64BE(2));
      at = 10;
    }
    const masked = (b[1] & 0x80) !== 0;
    const maskAt = at;
    if (masked) at += 4;
    if (b.length < at + len) return null;
    const payload = Buffer.from(b.subarray(at, at + len));
    if (masked) for (let i = 0; i < len; i++) payload[i] ^= b[maskAt + (i % 4)];
    this.buf = b.subarray(at + len);
    return { fin: (b[0] & 0x80) !== 0, opcode: b[0] & 0x0f, payload };
  }

  // A client's frames are masked (RFC 6455 section 5.3).
  write(opcode, payload) {
    if (this.closed) return;
    const len = payload.length;
    const head = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    if (len < 126) head[1] = 0x80 | len;
    else if (len < 65536) {
      head[1] = 0x80 | 126;
      head.writeUInt16BE(len, 2);
    } else {
      head[1] = 0x80 | 127;
      head.writeBigUInt64BE(BigInt(len), 2);
    }
    const mask = crypto.randomBytes(4);
    const body = Buffer.from(payload);
    for (let i = 0; i < len; i++) body[i] ^= mask[i % 4];
    this.socket.write(Buffer.concat([head, mask, body]));
  }

  send(text) {
    this.write(0x1, Buffer.from(text, 'utf8'));
  }

  close() {
    if (this.closed) return;
    this.write(0x8, Buffer.alloc(0));
    this.socket.end();
    this.shut();
  }
}
