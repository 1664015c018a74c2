"""``Dataset``: what a DataLoader reads (pymnn's ``MNN.data.Dataset``)."""
__all__ = ["Dataset"]


class Dataset:
    """Base class of datasets.

    Subclasses define ``__getitem__(index)`` returning ``(inputs, targets)``, two lists
    of Vars or arrays (a model may have several of each), and ``__len__``.
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"mnn: {type(self).__name__} does not define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"mnn: {type(self).__name__} does not define __len__")
