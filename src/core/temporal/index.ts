export {
  TemporalFilter,
  motionThreshold,
  R_PRIOR,
  R_MIN,
  R_MAX,
  Q_STATIC_RATIO,
  STABLE_BELOW,
  CUT_DELTA,
  SHIFT_DELTA,
  UPSAMPLED_SPATIAL_SLACK,
} from './filter.js';
export type { TemporalFilterOptions, TemporalStats } from './filter.js';
