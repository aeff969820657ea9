import { Controller, Get, Req, Res, UnauthorizedException } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import { type Request, type Response } from 'express';
import { HealthRegistry } from '../health/health-registry.service';
import { figureGauge, metricsRegistry } from './metrics';

/** Whether a scrape may read the metrics: with `METRICS_TOKEN` set, only with it; without, only from this machine. */
export function mayScrape(authorization: string | undefined, remote: string | undefined, token = process.env['METRICS_TOKEN']): boolean {
  if (token) {
    const given = Buffer.from(authorization?.match(/^Bearer ([\x21-\x7e]{1,512})$/)?.[1] ?? '');
    const expected = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
  return remote === '127.0.0.1' || remote === '::1' || remote === '::ffff:127.0.0.1';
}

@Controller('metrics')
export class MetricsController {
  constructor(private readonly health: HealthRegistry) {}

  /** Prometheus text format. */
  @Get()
  async scrape(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!mayScrape(req.headers.authorization, req.socket.remoteAddress)) throw new UnauthorizedException({ code: 'METRICS_TOKEN_INVALID', message: 'Metrics need METRICS_TOKEN (or a scrape from this machine).' });
    const { figures } = await this.health.evaluate();
    figureGauge.reset();
    for (const [name, value] of Object.entries(figures)) if (value !== null) figureGauge.set({ name }, value);
    res.setHeader('Content-Type', metricsRegistry.contentType);
    res.send(await metricsRegistry.metrics());
  }
}
