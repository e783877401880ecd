// The types the client's public API names come from these two modules (`Position`, `ClientFrame.Target`,
// `ErrorCode`, `DonationState`... from BrokerProtocol; `SpeedSmoother`, `DonorViewRules` from TrackingRules), so an
// app writes `import BrokerClient` and nothing else. `Tests/ClientImportTests` imports only this module and holds
// it to that.
@_exported import BrokerProtocol
@_exported import TrackingRules
