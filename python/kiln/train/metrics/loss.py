"""nn.Loss metric (MindSpore's mindspore.train.Loss)."""
from .metric import Metric, rearrange_inputs

__all__ = ["Loss"]


class Loss(Metric):
    """Average of the loss values passed to update since clear(): Σ_k mean(loss_k) / n_updates.

    update(loss): one 0-d or 1-D loss (Tensor, list or NumPy array; a 1-D loss is averaged first). eval(): a float.
    Raises ValueError (not 1 input, a loss with ndim > 1), TypeError (input type), RuntimeError (eval before
    update)."""

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        """Clears the accumulated loss."""
        self._sum_loss = 0
        self._total_num = 0

    @rearrange_inputs
    def update(self, *inputs):
        """Adds one loss value."""
        if len(inputs) != 1:
            raise ValueError(f"For 'Loss.update', it needs 1 input (loss), but got {len(inputs)}")
        loss = self._convert_data(inputs[0])
        if loss.ndim == 0:
            loss = loss.reshape(1)
        if loss.ndim != 1:
            raise ValueError(f"For 'Loss.update', the dimension of your input (loss) must be 1, but got {loss.ndim}.")
        # float: the sum is kept in double as MindSpore's (NumPy 1 promotes int + float32 scalar to float64), so
        # eval() gives a Python float with MindSpore's value
        self._sum_loss += float(loss.mean(-1))
        self._total_num += 1

    def eval(self):
        """The average loss. Raises RuntimeError when update was never called."""
        if self._total_num == 0:
            raise RuntimeError("The 'Loss' can not be calculated, because the number of samples is 0, please check "
                               "whether has called update method before calling eval method.")
        return self._sum_loss / self._total_num
