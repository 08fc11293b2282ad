// Built by .ci/consumer.sh against the packed packages, with PriorityAsync.MessagePump as its only reference: the
// analyzers of the core package must reach it and report Bad.cs (PA0001-PA0004), and nothing in Good.cs.
Console.WriteLine($"{nameof(AnalyzerConsumer.Bad)} and {nameof(AnalyzerConsumer.Good)} compiled");
