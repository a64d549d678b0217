// The runtime's ceiling: a bare node:http server answering fixed bytes to every request
// (after reading the request body, as the real server must; with CEILING_PARSE, parsing it as
// JSON too, as an intake must). Run as a child process.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.CEILING_BODY as string);
const status = Number(process.env.CEILING_STATUS ?? 200);
const parse = process.env.CEILING_PARSE === '1';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => {
    if (parse) chunks.push(chunk);
  });
  req.on('end', () => {
    if (parse) JSON.parse(Buffer.concat(chunks).toString());
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': body.length,
    });
    res.end(body);
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
