import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, formatTextLine } from './logging.js';

function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { stream, lines };
}

describe('createLogger', () => {
  it('writes one JSON object per line by default', () => {
    const { stream, lines } = sink();
    createLogger({ destination: stream, name: 'x' }).info({ pod: 'a/b' }, 'gated');
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ level: 30, name: 'x', pod: 'a/b', msg: 'gated' });
  });

  it('writes human-readable lines in text format, with the area and the fields', () => {
    const { stream, lines } = sink();
    const logger = createLogger({ destination: stream, format: 'text' }).child({ area: 'podplacement' });
    logger.warn(
      { err: new Error('boom'), retryInMs: 200, path: '/api/v1/pods' },
      'list/watch failed; retrying',
    );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}\[podplacement\] list\/watch failed; retrying err="boom" retryInMs=200 path=\/api\/v1\/pods$/,
    );
    expect(lines[0]).not.toContain('{');
  });

  it('defaults to info and ignores the environment (the CLI decides)', () => {
    const before = process.env.TESSERA_LOG_LEVEL;
    process.env.TESSERA_LOG_LEVEL = 'debug';
    try {
      const { stream, lines } = sink();
      const logger = createLogger({ destination: stream });
      logger.debug({}, 'hidden');
      expect(lines).toEqual([]);
      expect(logger.level).toBe('info');
    } finally {
      if (before === undefined) delete process.env.TESSERA_LOG_LEVEL;
      else process.env.TESSERA_LOG_LEVEL = before;
    }
  });
});

describe('formatTextLine', () => {
  it('quotes values with spaces, shows the logger name without an area and hides pid/hostname', () => {
    const line = formatTextLine(
      JSON.stringify({
        level: 50,
        time: '2026-01-01T00:00:00.000Z',
        pid: 1,
        hostname: 'h',
        name: 'tessera',
        msg: 'failed',
        reason: 'two words',
      }),
    );
    expect(line).toMatch(/ ERROR \[tessera\] failed reason="two words"\n$/);
    expect(line).not.toContain('pid=');
  });

  it('colours warnings only when asked', () => {
    const json = JSON.stringify({ level: 40, msg: 'm' });
    expect(formatTextLine(json, true)).toContain('\x1b[33m');
    expect(formatTextLine(json, false)).not.toContain('\x1b[');
  });

  it('passes a line that is not JSON through unchanged', () => {
    expect(formatTextLine('not json')).toBe('not json\n');
  });
});
