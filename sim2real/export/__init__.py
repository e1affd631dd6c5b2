"""Export trained policies to ONNX with their deployment contract inside."""
