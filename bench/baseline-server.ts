import Fastify from 'fastify';
import Database from 'better-sqlite3';

/**
 * The two baselines the service is measured against, each run as its own process:
 * - naive: Fastify + better-sqlite3, one prepared statement for the rows and one for the
 *   count, row objects through the default serialiser (the same database work, nothing clever);
 * - ceiling: a bare Fastify route answering one real page, serialised once at start.
 *
 * Usage: tsx bench/baseline-server.ts <naive|ceiling> <port> <sqlite file>
 */
const [mode, portText, file] = process.argv.slice(2);
if ((mode !== 'naive' && mode !== 'ceiling') || !portText || !file) {
  console.error('usage: baseline-server.ts <naive|ceiling> <port> <sqlite file>');
  process.exit(2);
}

const db = new Database(file, { readonly: true, fileMustExist: true });
db.pragma('cache_size = -32000');

const COLUMNS =
  '"symbol" AS "code", "date", "open", "high", "low", "close", "pre_close", "change", "pct_chg", ' +
  '"volume", "amount", "turnover_rate", "source", "updated_at", "created_at"';
const WHERE = 'WHERE "symbol" = ? AND "date" >= ? AND "date" <= ?';
const rowsStmt = db.prepare(
  `SELECT ${COLUMNS} FROM etf_daily ${WHERE} ORDER BY "date" DESC, "symbol" ASC, "source" ASC LIMIT ? OFFSET ?`,
);
const countStmt = db.prepare(`SELECT count(*) FROM etf_daily ${WHERE}`).pluck();

interface Q {
  code?: string;
  date_from?: string;
  date_to?: string;
  limit?: string;
  offset?: string;
}

function page(q: Q): object {
  const limit = Number(q.limit ?? 100);
  const offset = Number(q.offset ?? 0);
  const args = [q.code ?? '', q.date_from ?? '0000-00-00', q.date_to ?? '9999-99-99'];
  const data = rowsStmt.all(...args, limit, offset);
  const total = countStmt.get(...args) as number;
  return {
    code: 0,
    message: 'ok',
    data,
    meta: { total, limit, offset, has_more: offset + data.length < total },
  };
}

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 });
if (mode === 'naive') {
  app.get('/api/v1/etf/kline', async (req) => page(req.query as Q));
} else {
  const first = db.prepare('SELECT "symbol" FROM etf_daily LIMIT 1').pluck().get() as string;
  // Bytes, not a string: no per-response encoding, the cheapest answer Fastify can send.
  const body = Buffer.from(
    JSON.stringify(page({ code: first, date_from: '2017-01-01', date_to: '2017-12-31' })),
  );
  app.get('/api/v1/etf/kline', async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(body),
  );
}
await app.listen({ port: Number(portText), host: '127.0.0.1' });
console.log('listening');
// A clean exit on SIGTERM, so `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
