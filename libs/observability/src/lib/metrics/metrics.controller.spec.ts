import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mayScrape } from './metrics.controller';

describe('who may scrape /metrics', () => {
  it('with METRICS_TOKEN: only a bearer of it', () => {
    expect(mayScrape('Bearer s3cret-metrics-token', 's3cret-metrics-token')).toBe(true);
    expect(mayScrape('Bearer wrong', 's3cret-metrics-token')).toBe(false);
    expect(mayScrape('s3cret-metrics-token', 's3cret-metrics-token')).toBe(false);
    expect(mayScrape(undefined, 's3cret-metrics-token', true)).toBe(false);
  });

  it('without it: nobody, not even a local caller, unless explicitly opened', () => {
    expect(mayScrape(undefined, '', false)).toBe(false);
    expect(mayScrape('Bearer anything', undefined, false)).toBe(false);
    expect(mayScrape(undefined, '', true)).toBe(true);
  });

  it('reads the token from METRICS_TOKEN_FILE too (a mounted secret, as compose gives it)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'metrics-'));
    writeFileSync(path.join(dir, 'token'), 'file-metrics-token\n');
    const saved = { token: process.env['METRICS_TOKEN'], file: process.env['METRICS_TOKEN_FILE'] };
    delete process.env['METRICS_TOKEN'];
    process.env['METRICS_TOKEN_FILE'] = path.join(dir, 'token');
    try {
      expect(mayScrape('Bearer file-metrics-token')).toBe(true);
      expect(mayScrape('Bearer other')).toBe(false);
    } finally {
      if (saved.token === undefined) delete process.env['METRICS_TOKEN']; else process.env['METRICS_TOKEN'] = saved.token;
      if (saved.file === undefined) delete process.env['METRICS_TOKEN_FILE']; else process.env['METRICS_TOKEN_FILE'] = saved.file;
    }
  });
});
