import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

/** The process's logger (Fastify logs through it too). Keys and tokens never reach the logs. */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>): Logger {
  return pino({
    level: config.LOG_LEVEL,
    redact: {
      paths: ['req.headers["q-api-key"]', 'req.headers["up-api-key"]', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  });
}
