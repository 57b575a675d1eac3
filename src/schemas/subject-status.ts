import { z } from './common.js';

/** Where a subject stands (seed section 4.11). */
export const SubjectStatus = z.enum(['ENROLLED', 'PENDING_ADJUDICATION', 'REJECTED']).openapi({
  description:
    'PENDING_ADJUDICATION: a possible duplicate waits for a human; REJECTED: a duplicate was found. Only ENROLLED subjects are matched against.',
});
