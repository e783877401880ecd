/// Placeholder until the renderer lands.
public enum WatchRenderingPlaceholder {}
