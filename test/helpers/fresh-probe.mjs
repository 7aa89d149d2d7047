// A probe in its own process: GETs each path of argv[3] (JSON: [{path, headers}]) on a fresh
// connection, one after the other, each given up after argv[4] ms; prints one JSON line of
// results. Run from another process than the test's, so nothing the test does can delay it.
import { Buffer } from 'node:buffer';
import http from 'node:http';

const port = Number(process.argv[2]);
const plan = JSON.parse(process.argv[3]);
const giveUpMs = Number(process.argv[4] ?? 10000);

function get({ path, headers = {} }) {
  const started = Date.now();
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path, headers: { connection: 'close', ...headers }, agent: false },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          let code = null;
          try {
            code = JSON.parse(body).code ?? null;
          } catch {
            // Not JSON (/metrics).
          }
          resolve({ path, status: res.statusCode, code, ms: Date.now() - started, body: body.slice(0, 200) });
        });
        res.on('error', () => resolve({ path, status: 0, error: 'response', ms: Date.now() - started }));
      },
    );
    req.setTimeout(giveUpMs, () => req.destroy(new Error('no answer')));
    req.on('error', (err) => resolve({ path, status: 0, error: err.message, ms: Date.now() - started }));
  });
}

const out = [];
for (const step of plan) out.push(await get(step));
process.stdout.write(JSON.stringify(out) + '\n');
