import { mayScrape } from './metrics.controller';

describe('who may scrape /metrics (issue 13 point 5)', () => {
  it('with METRICS_TOKEN: only a bearer of it, from anywhere', () => {
    expect(mayScrape('Bearer s3cret-metrics-token', '10.0.0.7', 's3cret-metrics-token')).toBe(true);
    expect(mayScrape('Bearer wrong', '127.0.0.1', 's3cret-metrics-token')).toBe(false);
    expect(mayScrape('s3cret-metrics-token', '127.0.0.1', 's3cret-metrics-token')).toBe(false);
    expect(mayScrape(undefined, '127.0.0.1', 's3cret-metrics-token')).toBe(false);
  });

  it('without it: only a scrape from this machine', () => {
    for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1']) expect(mayScrape(undefined, local, '')).toBe(true);
    for (const remote of ['10.0.0.7', '192.168.1.2', undefined]) expect(mayScrape(undefined, remote, '')).toBe(false);
  });
});
