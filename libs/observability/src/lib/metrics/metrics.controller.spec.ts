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
});
