import { pino, type Logger } from 'pino';
import { splitKeys, type Config } from './config.js';

/** Query parameters whose values are secrets by their name (`q-api-key`, `token`, `API_KEY`…). */
const SECRET_PARAM = /key|token|secret|passw|auth|sig/i;
/** A managed key anywhere (api-key-format.ts), and the admin keys of the same shape. */
const MANAGED_KEY = /mds_[a-z]_[0-9A-Za-z]{38}/g;
const CENSOR = '[redacted]';

/**
 * The URL as logged: a key pasted into it by mistake never reaches the log. Values of key-like
 * parameters, anything shaped like a managed key, and the configured static keys and admin token
 * are replaced. Anything else (an invented string under an ordinary name) cannot be told from
 * data and stays.
 */
export function urlRedactor(secrets: readonly string[]): (url: string) => string {
  const known = secrets.filter((s) => s.length > 0);
  return (url) => {
    let out = url;
    const q = out.indexOf('?');
    if (q !== -1) {
      const params = out
        .slice(q + 1)
        .split('&')
        .map((p) => {
          const eq = p.indexOf('=');
          return eq !== -1 && SECRET_PARAM.test(p.slice(0, eq)) ? `${p.slice(0, eq + 1)}${CENSOR}` : p;
        });
      out = `${out.slice(0, q + 1)}${params.join('&')}`;
    }
    if (out.includes('mds_')) out = out.replace(MANAGED_KEY, CENSOR);
    for (const s of known) {
      if (out.includes(s)) out = out.split(s).join(CENSOR);
      const encoded = encodeURIComponent(s);
      if (encoded !== s && out.includes(encoded)) out = out.split(encoded).join(CENSOR);
    }
    return out;
  };
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** The process's logger (Fastify logs through it too). Keys and tokens never reach the logs. */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL' | 'MDS_QUERY_KEYS' | 'MDS_INGEST_KEYS' | 'MDS_ADMIN_TOKEN'>,
): Logger {
  const redactUrl = urlRedactor([
    ...splitKeys(config.MDS_QUERY_KEYS),
    ...splitKeys(config.MDS_INGEST_KEYS),
    config.MDS_ADMIN_TOKEN ?? '',
  ]);
  return pino({
    level: config.LOG_LEVEL,
    redact: {
      paths: ['req.headers["q-api-key"]', 'req.headers["up-api-key"]', 'req.headers.authorization'],
      censor: CENSOR,
    },
    serializers: {
      // Fastify's request serializer, with the URL redacted.
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: redactUrl(req.url),
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
  });
}
