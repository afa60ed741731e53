import { runService } from '@gatehouse/service';
import { authService } from '@gatehouse/token-server';

await runService(authService);
