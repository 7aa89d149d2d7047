import Fastify from 'fastify';
import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * The baselines the service is measured against, each run as its own process:
 * - naive: Fastify + better-sqlite3, one prepared statement for the rows and one for the
 *   count, row objects through the default serialiser (the same database work, nothing clever);
 * - naive-pg: the same on PostgreSQL (pg pool of 10, two named prepared statements);
 * - ceiling: a bare Fastify route answering one real page, serialised once at start.
 *
 * Usage: tsx bench/baseline-server.ts <naive|naive-pg|ceiling> <port> <sqlite file | postgres url>
 */
const [mode, portText, target] = process.argv.slice(2);
if ((mode !== 'naive' && mode !== 'naive-pg' && mode !== 'ceiling') || !portText || !target) {
  console.error('usage: baseline-server.ts <naive|naive-pg|ceiling> <port> <sqlite file | postgres url>');
  process.exit(2);
}

const COLUMNS =
  '"symbol" AS "code", "date", "open", "high", "low", "close", "pre_close", "change", "pct_chg", ' +
  '"volume", "amount", "turnover_rate", "source", "updated_at", "created_at"';
const ORDER = 'ORDER BY "date" DESC, "symbol" ASC, "source" ASC';

interface Q {
  code?: string;
  date_from?: string;
  date_to?: string;
  limit?: string;
  offset?: string;
}

type Page = (args: string[], limit: number, offset: number) => Promise<{ data: unknown[]; total: number }>;

function sqlitePage(file: string): Page {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('cache_size = -32000');
  const where = 'WHERE "symbol" = ? AND "date" >= ? AND "date" <= ?';
  const rowsStmt = db.prepare(`SELECT ${COLUMNS} FROM etf_daily ${where} ${ORDER} LIMIT ? OFFSET ?`);
  const countStmt = db.prepare(`SELECT count(*) FROM etf_daily ${where}`).pluck();
  return async (args, limit, offset) => ({
    data: rowsStmt.all(...args, limit, offset),
    total: countStmt.get(...args) as number,
  });
}

function postgresPage(url: string): Page {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const where = 'WHERE "symbol" = $1 AND "date" >= $2 AND "date" <= $3';
  const rowsSql = `SELECT ${COLUMNS} FROM etf_daily ${where} ${ORDER} LIMIT $4 OFFSET $5`;
  const countSql = `SELECT count(*)::int AS n FROM etf_daily ${where}`;
  return async (args, limit, offset) => {
    const rows = await pool.query({ name: 'rows', text: rowsSql, values: [...args, limit, offset] });
    const count = await pool.query({ name: 'count', text: countSql, values: args });
    return { data: rows.rows, total: (count.rows[0] as { n: number }).n };
  };
}

const page = mode === 'naive-pg' ? postgresPage(target) : sqlitePage(target);

async function envelope(q: Q): Promise<object> {
  const limit = Number(q.limit ?? 100);
  const offset = Number(q.offset ?? 0);
  const args = [q.code ?? '', q.date_from ?? '0000-00-00', q.date_to ?? '9999-99-99'];
  const { data, total } = await page(args, limit, offset);
  return {
    code: 0,
    message: 'ok',
    data,
    meta: { total, limit, offset, has_more: offset + data.length < total },
  };
}

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 });
if (mode === 'ceiling') {
  const db = new Database(target, { readonly: true, fileMustExist: true });
  const first = db.prepare('SELECT "symbol" FROM etf_daily LIMIT 1').pluck().get() as string;
  db.close();
  // Bytes, not a string: no per-response encoding, the cheapest answer Fastify can send.
  const body = Buffer.from(
    JSON.stringify(await envelope({ code: first, date_from: '2017-01-01', date_to: '2017-12-31' })),
  );
  app.get('/api/v1/etf/kline', async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send(body),
  );
} else {
  app.get('/api/v1/etf/kline', async (req) => envelope(req.query as Q));
}
await app.listen({ port: Number(portText), host: '127.0.0.1' });
console.log('listening');
// A clean exit on SIGTERM, so `node --cpu-prof` writes its profile.
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
