import { Injectable } from '@nestjs/common';

/** One dependency whose readiness the service reports (a database, the broker). */
export interface ReadinessCheck {
  name: string;
  check(): Promise<boolean>;
}

/** Collects readiness checks from every service module hosted in this process. */
@Injectable()
export class HealthRegistry {
  private readonly checks: ReadinessCheck[] = [];

  register(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  async evaluate(): Promise<{ ready: boolean; checks: Record<string, boolean> }> {
    const results = await Promise.all(
      this.checks.map(async (c) => [c.name, await c.check().catch(() => false)] as const),
    );
    const checks = Object.fromEntries(results);
    return { ready: results.length > 0 && results.every(([, ok]) => ok), checks };
  }
}
