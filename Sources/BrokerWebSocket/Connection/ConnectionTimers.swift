import NIOCore

/// Where a ``ConnectionTimers`` list keeps one of its nodes: fields the node carries inside itself, so that being
/// timed costs a connection no allocation of its own.
package struct TimerLinks<Node: AnyObject> {
    /// When the node is due; meaningful while it is listed.
    var deadline = NIODeadline.uptimeNanoseconds(0)
    /// The next node, later or due at the same time; the list holds its nodes through these references.
    var next: Node?
    /// The node before. Unowned: a listed node's predecessor is listed too, so it is alive (the list owns it).
    unowned(unsafe) var previous: Node?
    /// The list the node is in, if any (compared by identity only).
    unowned(unsafe) var list: AnyObject?

    init() {}
}

/// A connection timed by a ``ConnectionTimers`` list.
package protocol TimedConnection: AnyObject, SendableMetatype {
    /// The list's links, carried by the connection.
    var timerLinks: TimerLinks<Self> { get set }
    /// The connection's deadline in `timers` has come; it is no longer listed there.
    func timerExpired(_ timers: ConnectionTimers<Self>)
}

/// The timers of the connections of one event loop that share one kind of deadline (every heartbeat, or every
/// close grace): one list ordered by deadline and one scheduled task for the earliest, instead of a `Scheduled`,
/// two closures and an entry of NIO's task heap for each connection. On its event loop only.
///
/// The list is doubly linked through the nodes (``TimerLinks``), so a connection leaves it at once when it ends.
/// A new deadline is placed by walking back from the latest one; the connections of a loop share their period,
/// so a new deadline is almost always the latest and the walk stops at once. Each node is told at its deadline,
/// in deadline order, within the scheduled task that the event loop runs at that time: on an `EmbeddedEventLoop`
/// virtual time moves it exactly as it moved the per-connection timers.
package final class ConnectionTimers<Node: TimedConnection> {
    /// The loop the list is on, and every node told from it.
    let eventLoop: any EventLoop
    private var head: Node?
    /// The last node. Unowned: listed nodes are owned through `head` and the nodes' `next`.
    private unowned(unsafe) var tail: Node?
    /// The scheduled task that serves the earliest deadline, and when it runs.
    private var wakeUp: (task: Scheduled<Void>, at: NIODeadline)?

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Whether nothing is listed.
    var isEmpty: Bool { head == nil }

    /// Lists `node` to be told after `delay` from now (its previous deadline in this list, if any, is dropped).
    func insert(_ node: Node, in delay: TimeAmount) {
        remove(node)
        let deadline = eventLoop.now + delay
        node.timerLinks.deadline = deadline
        node.timerLinks.list = self
        var before = tail
        while let candidate = before, candidate.timerLinks.deadline > deadline {
            before = candidate.timerLinks.previous
        }
        if let before {
            let after = before.timerLinks.next
            node.timerLinks.next = after
            node.timerLinks.previous = before
            if let after { after.timerLinks.previous = node } else { tail = node }
            before.timerLinks.next = node
        } else {
            node.timerLinks.next = head
            node.timerLinks.previous = nil
            if let head { head.timerLinks.previous = node } else { tail = node }
            head = node
        }
        armWakeUp()
    }

    /// Takes `node` out of the list; nothing happens when it is not in this list.
    func remove(_ node: Node) {
        guard node.timerLinks.list === self else { return }
        let previous = node.timerLinks.previous
        let next = node.timerLinks.next
        if let previous { previous.timerLinks.next = next } else { head = next }
        if let next { next.timerLinks.previous = previous } else { tail = previous }
        node.timerLinks.next = nil
        node.timerLinks.previous = nil
        node.timerLinks.list = nil
        if head == nil, let wakeUp {
            wakeUp.task.cancel()
            self.wakeUp = nil
        }
    }

    /// Tells every node that is due, earliest first, then waits for the next deadline.
    private func expire() {
        wakeUp = nil
        let now = eventLoop.now
        while let node = head, node.timerLinks.deadline <= now {
            remove(node)
            node.timerExpired(self)
        }
        armWakeUp()
    }

    /// Schedules the task for the earliest deadline, unless one runs by then already (an early run finds nothing
    /// due and schedules the next).
    private func armWakeUp() {
        guard let deadline = head?.timerLinks.deadline else { return }
        if let wakeUp {
            if wakeUp.at <= deadline { return }
            wakeUp.task.cancel()
        }
        let timers = NIOLoopBound(self, eventLoop: eventLoop)
        wakeUp = (eventLoop.scheduleTask(deadline: deadline) { timers.value.expire() }, deadline)
    }
}
