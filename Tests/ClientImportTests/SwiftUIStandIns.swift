// On Linux there is no SwiftUI: these stand-ins give the few names the CLIENTS.md example uses (View, State,
// VStack, Text, `.task`) so the example's code compiles here, checked against BrokerClient's real public API. They
// only mimic SwiftUI's shapes; on a Mac the real SwiftUI is used instead and nothing of this file is compiled.
#if !canImport(SwiftUI)
@MainActor
protocol View {}

/// SwiftUI's `@State`: a value kept for the view's lifetime, set at `init` through its storage (`_name`).
@propertyWrapper
struct State<Value> {
    private final class Storage {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private let storage: Storage

    init(initialValue: Value) { storage = Storage(initialValue) }
    init(wrappedValue: Value) { storage = Storage(wrappedValue) }

    var wrappedValue: Value {
        get { storage.value }
        nonmutating set { storage.value = newValue }
    }
}

/// What the stand-in builder makes of a view's content.
struct Stack: View {
    let parts: [any View]
}

@MainActor
@resultBuilder
enum ViewBuilder {
    static func buildExpression(_ view: any View) -> any View { view }
    static func buildBlock(_ parts: any View...) -> Stack { Stack(parts: parts) }
    static func buildOptional(_ part: Stack?) -> Stack { part ?? Stack(parts: []) }
    static func buildEither(first: Stack) -> Stack { first }
    static func buildEither(second: Stack) -> Stack { second }
}

enum HorizontalAlignment {
    case leading, center, trailing
}

struct VStack: View {
    let content: Stack
    init(alignment: HorizontalAlignment = .center, spacing: Double? = nil, @ViewBuilder content: () -> Stack) {
        self.content = content()
    }
}

struct Text: View {
    let words: String
    init(_ words: String) { self.words = words }
}

/// A view with a task that runs while it is shown.
struct TaskView: View {
    let base: any View
    let action: @MainActor @Sendable () async -> Void
}

extension View {
    func task(_ action: @escaping @MainActor @Sendable () async -> Void) -> some View {
        TaskView(base: self, action: action)
    }
}
#endif
