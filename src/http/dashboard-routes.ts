import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { PACKAGE_ROOT } from '../runtime-paths.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Everything from this origin, nothing inline, no frames: the page holds the admin token, so
 * injected markup must not be able to run script or send it elsewhere.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/**
 * The page's files live in src/dashboard (plain ES modules and CSS, no build step), whichever
 * layout runs (runtime-paths.ts).
 */
export function dashboardDir(): string {
  const dir = fileURLToPath(new URL('src/dashboard/', PACKAGE_ROOT));
  if (!fs.existsSync(path.join(dir, 'index.html'))) throw new Error(`dashboard files not found in ${dir}`);
  return dir;
}

/** Reads every servable file once at boot: a handful of small files, answered from memory. */
function loadAssets(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(relPath);
      const type = TYPES[path.extname(entry.name)];
      if (!entry.isFile() || !type) continue;
      const body = fs.readFileSync(path.join(dir, relPath));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      out.set(relPath, { body, type, etag });
    }
  };
  walk('');
  return out;
}

function send(req: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  // Revalidated on every load (a 304 is tiny), so an upgrade never serves stale modules.
  reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache', etag: asset.etag });
  if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  return reply.type(asset.type).send(asset.body);
}

/**
 * The operator's dashboard at /dashboard. The page and its assets load without a token (they
 * hold no data); every figure on it comes from /admin/api/*, which requires the admin token.
 */
export function registerDashboardRoutes(app: FastifyInstance, dir: string = dashboardDir()): void {
  const assets = loadAssets(dir);
  const index = assets.get('index.html');
  if (!index) throw new Error(`${dir}/index.html missing`);

  app.get('/dashboard', { schema: { hide: true } }, async (req, reply) => send(req, reply, index));
  app.get<{ Params: { '*': string } }>(
    '/dashboard/assets/*',
    { schema: { hide: true } },
    async (req, reply) => {
      const asset = assets.get(`assets/${req.params['*']}`);
      if (!asset) throw new AppError(4041, `no dashboard asset ${req.params['*']}`);
      return send(req, reply, asset);
    },
  );
}
