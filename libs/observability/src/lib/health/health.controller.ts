import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { type Response } from 'express';
import { HealthRegistry, type Readiness } from './health-registry.service';

@Controller('health')
export class HealthController {
  constructor(private readonly registry: HealthRegistry) {}

  /** Liveness: the process is up and its event loop answers. */
  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: 200 only once every registered dependency (database, broker) answers, else 503; `figures` adds counts such as parked events. */
  @Get('ready')
  async ready(@Res({ passthrough: true }) res: Response): Promise<Readiness> {
    const result = await this.registry.evaluate();
    res.status(result.ready ? 200 : 503);
    return result;
  }
}
