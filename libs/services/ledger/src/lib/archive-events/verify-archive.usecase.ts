import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { LEDGER } from '../ledger.constants';
import { type ArchiveLink, EventArchive } from './event-archive.repository';
import { type ChainCursor, type ChainProblem, START, verifyPage } from './hash-chain';

const PAGE = 5000;

export interface ArchiveVerdict {
  ok: boolean;
  /** Rows checked. */
  rows: number;
  /** The last good position and hash: record it, and a later verify proves nothing before it was rewritten. */
  head: ChainCursor;
  problem?: ChainProblem;
}

/** Walks the whole archive in position order, a page at a time, recomputing every hash. */
@Injectable()
export class VerifyArchiveUseCase {

  constructor(@InjectDataSource(LEDGER) private readonly dataSource: DataSource) {}

  async verify(): Promise<ArchiveVerdict> {
    let at = START;
    for (;;) {
      const page = await EventArchive.pageAfter(this.dataSource, at.position, PAGE);
      const checked = verifyPage(page, at);
      // Positions count 1, 2, 3… so the last good position is also how many rows verified.
      if (!checked.ok) return { ok: false, rows: checked.at.position, head: checked.at, problem: checked.problem };
      at = checked.at;
      if (page.length < PAGE) return { ok: true, rows: at.position, head: at };
    }
  }

  at(position: number): Promise<ArchiveLink | undefined> {
    return EventArchive.linkAt(this.dataSource, position);
  }
}
