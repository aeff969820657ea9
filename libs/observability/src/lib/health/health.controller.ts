import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { type Response } from 'express';
import { HealthRegistry } from './health-registry.service';

@Controller('health')
export class HealthController {
  constructor(private readonly registry: HealthRegistry) {}

  /** Liveness: the process is up and its event loop answers. */
  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: 200 only once every registered dependency (database, broker) answers, else 503. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
    const result = await this.registry.evaluate();
    res.status(result.ready ? 200 : 503);
    return result;
  }
}
