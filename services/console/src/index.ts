export { startConsoleService, type ConsoleServiceOptions } from './app';
export { consoleConfigSchema, loadConsoleConfig, type ConsoleConfig } from './config';
export { CONSOLE_PREFIX } from './static-routes';
