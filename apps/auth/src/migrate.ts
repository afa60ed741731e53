import { migrateService } from '@gatehouse/service';
import { authService } from '@gatehouse/token-server';

await migrateService(authService);
