// Types of server/main.mjs for the console's TypeScript tests.
import type { Server, IncomingMessage, ServerResponse } from 'node:http';

export const DEFAULT_CONSOLE_CLIENT_ID: string;
export interface ConsoleSettings {
  port: number;
  host?: string;
  staticDir: string;
  config: { authUrl: string; identityUrl: string; treeUrl: string; clientId: string };
  origins: string[];
}
export function consoleSettings(env?: NodeJS.ProcessEnv): ConsoleSettings;
export function contentSecurityPolicy(origins: string[]): string;
export function createHandler(settings: ConsoleSettings): (req: IncomingMessage, res: ServerResponse) => void;
export function startConsoleServer(settings?: ConsoleSettings): Promise<Server>;
