/// Placeholder until the simulator lands.
public enum SimulationKitPlaceholder {}
