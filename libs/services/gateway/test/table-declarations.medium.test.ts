/** Typed tables (medium tier): the gateway's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { CALL, OPERATION_KEY } from '../src/lib/calls/calls.repository';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';

jest.setTimeout(60_000);

describe('the gateway\'s tables', () => expectTablesAsMigrated('gw', gatewayDataSourceOptions, [CALL, OPERATION_KEY]));
