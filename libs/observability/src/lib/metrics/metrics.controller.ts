import { Controller, Get, Req, Res, UnauthorizedException } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { type Request, type Response } from 'express';
import { envValue } from '@tollgate/config';
import { HealthRegistry } from '../health/health-registry.service';
import { figureGauge, metricsRegistry } from './metrics';

/**
 * Whether a scrape may read the metrics: with `METRICS_TOKEN` set, only a bearer of it; without,
 * nobody — unless the operator explicitly opened them with `METRICS_OPEN=true`. Being on this machine proves nothing
 * (any local process, or a proxy in front of the app, connects from loopback).
 */
export function mayScrape(authorization: string | undefined, token = envValue('METRICS_TOKEN'), open = process.env['METRICS_OPEN'] === 'true'): boolean {
  if (token) {
    const given = Buffer.from(authorization?.match(/^Bearer ([\x21-\x7e]{1,512})$/)?.[1] ?? '');
    const expected = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
  return open;
}

@Controller('metrics')
export class MetricsController {
  constructor(private readonly health: HealthRegistry) {}

  /** Prometheus text format. */
  @Get()
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!mayScrape(req.headers.authorization)) throw new UnauthorizedException({ code: 'METRICS_TOKEN_INVALID', message: 'Metrics need the bearer token in METRICS_TOKEN (or METRICS_OPEN=true to serve them to anyone).' });
    const { figures } = await this.health.evaluate();
    figureGauge.reset();
    for (const [name, value] of Object.entries(figures)) if (value !== null) figureGauge.set({ name }, value);
    res.setHeader('Content-Type', metricsRegistry.contentType);
    res.send(await metricsRegistry.metrics());
  }
}
