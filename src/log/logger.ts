// Logging: JSON lines in <dataDir>/logs/ (rotated daily, size-capped, kept 14 days) and, on
// stderr, readable lines or (SMSDROP_LOG_FORMAT=json) one JSON object per line for a log shipper.
// Readable lines are coloured only on a terminal: pm2's log files and pipes get plain text. Every
// line passes through redactSecrets first, so the auth token, a sig parameter or an
// Authorization value cannot reach a log whatever the caller passes.
import path from 'node:path';
import winston from 'winston';
import DailyRotateFile from 'winston-daily-rotate-file';
import { redactSecrets } from './redact.js';

export type Logger = winston.Logger;

export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  level: string;
  /** Folder for JSON log files; none: terminal only. */
  logDir?: string;
  /** Output on stderr (default true). */
  console?: boolean;
  /** What goes to stderr: readable lines (default) or one JSON object per line. */
  format?: LogFormat;
  /** Colour the level of readable lines; default: only when stderr is a terminal. */
  colour?: boolean;
}

const redact = winston.format((info) => {
  const clean = JSON.parse(redactSecrets(JSON.stringify(info))) as winston.Logform.TransformableInfo;
  for (const key of Object.keys(info)) if (!(key in clean)) delete info[key];
  Object.assign(info, clean);
  return info;
});

const readable = winston.format.printf((info) => {
  const { level, message, timestamp, ...rest } = info;
  const extra = Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : '';
  return `${String(timestamp)} ${level} ${String(message)}${extra}`;
});

export function createLogger(options: LoggerOptions): Logger {
  const transports: winston.transport[] = [];
  if (options.console !== false) {
    const colour = options.colour ?? process.stderr.isTTY === true;
    const format =
      options.format === 'json' ? winston.format.json() : colour ? winston.format.combine(winston.format.colorize({ all: false }), readable) : readable;
    transports.push(new winston.transports.Console({ stderrLevels: ['error', 'warn', 'info', 'debug'], format }));
  }
  if (options.logDir) {
    transports.push(
      new DailyRotateFile({
        dirname: options.logDir,
        filename: 'smsdrop-%DATE%.log',
        datePattern: 'YYYY-MM-DD',
        maxSize: '50m',
        maxFiles: '14d',
        format: winston.format.json(),
      }),
    );
  }
  return winston.createLogger({
    level: options.level,
    format: winston.format.combine(winston.format.timestamp(), redact()),
    transports,
  });
}

/** A logger that drops everything: for library use and quiet tests. */
export function silentLogger(): Logger {
  return winston.createLogger({ silent: true, transports: [new winston.transports.Console({ silent: true })] });
}

export function logDirOf(dataDir: string): string {
  return path.join(dataDir, 'logs');
}
