export {
  TemporalFilter,
  motionThreshold,
  R_PRIOR,
  R_MIN,
  R_MAX,
  Q_STATIC_RATIO,
  STABLE_BELOW,
} from './filter.js';
export type { TemporalFilterOptions, TemporalStats } from './filter.js';
