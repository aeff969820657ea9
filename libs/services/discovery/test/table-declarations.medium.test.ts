/** Typed tables (medium tier): discovery's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { CATALOG_TOOL, PROVIDER, TOOL_BINDING, TOOL_VERSION } from '../src/lib/catalog/catalog-tables';
import { discoveryDataSourceOptions } from '../src/lib/discovery.datasource-options';

jest.setTimeout(60_000);

describe('discovery\'s tables', () => expectTablesAsMigrated('disc', discoveryDataSourceOptions, [PROVIDER, CATALOG_TOOL, TOOL_VERSION, TOOL_BINDING]));
