// One HTTP/1.1 request written byte for byte on a TCP socket, for targets a client library would
// normalize (percent-escapes, the absolute form, a `#`). The answer is read to the end of the
// connection (Connection: close); a chunked body is decoded.
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function rawRequest(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const lines = [`${method} ${target} HTTP/1.1`, `host: 127.0.0.1:${port}`, 'connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) {
    lines.push('content-type: application/json', `content-length: ${Buffer.byteLength(body)}`);
  }
  return rawExchange(port, `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
}

/** Writes `request` as given (malformed framing included) and reads the answer to the connection's end. */
export function rawExchange(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(parse(Buffer.concat(chunks).toString('utf8')));
      } catch (err) {
        reject(err);
      }
    });
  });
}

function parse(text: string): RawResponse {
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`no complete answer: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(split + 4);
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
  return { status, headers, body };
}

function unchunk(text: string): string {
  let out = '';
  for (let at = 0; ; ) {
    const eol = text.indexOf('\r\n', at);
    const size = Number.parseInt(text.slice(at, eol), 16);
    if (!size) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
