//! Positioning-time curves.
